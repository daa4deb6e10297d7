# t2exp.bash — bash completion for t2exp: commands, sub-commands, each command's own options,
# experiment ids (and EXP.N trial addresses), files where a command takes one. The words come from
# the program itself (`t2exp __complete`), so they follow the installed version. Installed into
# share/bash-completion/completions/t2exp, where bash-completion loads it on first use; or
# `source` this file.

_t2exp_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local prog=${COMP_WORDS[0]} home=() cmd= cmdpos=0 i w
  # The command: the first word after the global options (--home DIR, --version, --help).
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if [ "$w" = --home ]; then
      home=(--home "${COMP_WORDS[i + 1]}")
      i=$((i + 1))
    elif [ "${w:0:1}" != - ]; then
      cmd=$w
      cmdpos=$i
      break
    fi
  done
  COMPREPLY=()
  if [ -z "$cmd" ]; then
    if [ "$prev" = --home ]; then
      COMPREPLY=($(compgen -d -- "$cur"))
    elif [ "${cur:0:1}" = - ]; then
      COMPREPLY=($(compgen -W "--home --version --help" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$("$prog" __complete commands 2>/dev/null)" -- "$cur"))
    fi
    return 0
  fi
  case $prev in
    --home | --out) COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
    --format) COMPREPLY=($(compgen -W "svg png" -- "$cur")); return 0 ;;
    --from-checkpoint) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
    --kind) COMPREPLY=($(compgen -W "training validation" -- "$cur")); return 0 ;;
    --config | --top | --port | --bind | --jobs | --force | --description) return 0 ;;
  esac
  if [ "${cur:0:1}" = - ]; then
    COMPREPLY=($(compgen -W "$("$prog" __complete options "$cmd" 2>/dev/null)" -- "$cur"))
    return 0
  fi
  # The operand's position among the command's operands (options and their values skipped), and
  # the first operand (a sub-command, for those that have them).
  local n=0 sub=
  for ((i = cmdpos + 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      --home | --config | --kind | --top | --from-checkpoint | --port | --bind | --jobs | --force | --out | --format | \
        --description)
        i=$((i + 1)) ;;
      -*) ;;
      *) [ $n -eq 0 ] && sub=$w; n=$((n + 1)) ;;
    esac
  done
  local ids=0 files=0 dirs=0
  case $cmd in
    create | preview | export) files=1 ;;
    # A CHECKPOINT is a file, or an experiment or trial (EXP, EXP.N) whose best checkpoint it is.
    evaluate) files=1; [ $n -eq 0 ] && ids=1 ;;
    init) dirs=1 ;;
    pipeline)
      if [ $n -eq 0 ]; then COMPREPLY=($(compgen -W "$("$prog" __complete subcommands pipeline)" -- "$cur")); else files=1; fi ;;
    pipelines | model)
      if [ $n -eq 0 ]; then
        COMPREPLY=($(compgen -W "$("$prog" __complete subcommands "$cmd" 2>/dev/null)" -- "$cur"))
      elif [ "$cmd $sub" = "model register" ] && [ $n -eq 2 ]; then
        ids=1 # model register NAME CHECKPOINT
      fi ;;
    resume) if [ $n -eq 0 ]; then ids=1; else files=1; fi ;;
    activate | pause | kill | follow | delete | describe | trials | metrics | logs | checkpoints | plot | importance)
      [ $n -eq 0 ] && ids=1 ;;
  esac
  if [ $ids = 1 ]; then
    local prefix=
    [[ $cur == *.* ]] && prefix=${cur%%.*}.
    COMPREPLY=($(compgen -W "$("$prog" "${home[@]}" __complete ids $prefix 2>/dev/null)" -- "$cur"))
  fi
  if [ $files = 1 ]; then
    COMPREPLY+=($(compgen -f -- "$cur"))
  elif [ $dirs = 1 ]; then
    COMPREPLY=($(compgen -d -- "$cur"))
  fi
  return 0
}
complete -o filenames -F _t2exp_complete t2exp
