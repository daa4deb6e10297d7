# example_flow.bash — shared by the pipeline_example*.sh tests (after common.bash): a copy of the
# example flow configs/examples/fashion_mnist_flow.yaml with CI-small lengths, and readers of
# `t2exp pipelines describe --json`.

# copy_flow DIR SEARCH_BATCHES SEARCH_TRIALS FINAL_BATCHES — the flow and its stage configs in
# DIR, the programs taken from this build, the search's max_length and max_trials and the
# retrain's length (validation every FINAL_BATCHES/2) shrunk. Fails when an edit finds nothing
# to change (the example changed: the test would otherwise run it at full length).
copy_flow() {
  local dir=$1 sb=$2 st=$3 fb=$4
  mkdir -p "$dir"
  cp "$EXAMPLES/fashion_mnist_flow.yaml" "$dir/"
  cp -r "$EXAMPLES/flow" "$dir/"
  sed -i "s#\.\./\.\./build#$T2EXP_BUILD#g" "$dir/fashion_mnist_flow.yaml"
  grep -q "$T2EXP_BUILD/tools/fashion_mnist_prepare" "$dir/fashion_mnist_flow.yaml" || fail "copy_flow: no ../../build paths in the example flow"
  sed -i "/^searcher:/,/^[a-z]/{s/^    batches: [0-9]*/    batches: $sb/; s/^  max_trials: [0-9]*/  max_trials: $st/}" "$dir/flow/search.yaml"
  grep -q "^    batches: $sb\$" "$dir/flow/search.yaml" && grep -q "^  max_trials: $st\$" "$dir/flow/search.yaml" ||
    fail "copy_flow: flow/search.yaml's max_length/max_trials not found"
  sed -i "/^searcher:/,/^[a-z]/s/^    batches: [0-9]*/    batches: $fb/; /^min_validation_period:/,/^[a-z]/s/^  batches: [0-9]*/  batches: $((fb / 2))/" "$dir/flow/final.yaml"
  grep -q "^    batches: $fb\$" "$dir/flow/final.yaml" && grep -q "^  batches: $((fb / 2))\$" "$dir/flow/final.yaml" ||
    fail "copy_flow: flow/final.yaml's max_length/min_validation_period not found"
}

# stage_field RUN_JSON STAGE PATH — a field of one stage in `pipelines describe RUN --json`
# output (PATH as in SQLite's json_extract, from the stage object, e.g. '$.result.best.metric').
stage_field() {
  OUT=$1 json "(SELECT json_extract(s.value, '$3') FROM json_each(j, '\$.stages') s
               WHERE json_extract(s.value, '\$.stage') = '$2')"
}
