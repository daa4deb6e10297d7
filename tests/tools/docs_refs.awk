# docs_refs.awk — lists what README.md and docs/*.md say exists, for docs_match_code.sh.
# Only code is read (fenced code blocks and `code spans`), never prose. One tab-separated record a
# line: KIND, FILE:LINE, VALUE [, EXTRA]:
#   cmd    a `t2exp COMMAND` (COMMAND lower case: `t2exp COMMAND` placeholders are skipped)
#   opt    an --option on a line or span that runs t2exp; EXTRA is the command, if any
#   api    a t2_/T2_ identifier: in spans and C blocks every one, in other blocks (program output)
#          only calls, t2_name(; t2__ ones are internal and are checked against the sources
#   key    a config key path, from docs/config-reference.md's key tables and "Accepted and
#          ignored" lists (the section heading gives the prefix: "Searcher" -> searcher.)
#   yaml   a ```yaml block: EXTRA is the line of its first line; the block follows, one record per
#          line as kind "yline", so the caller can preview it
# Usage: awk -f docs_refs.awk README.md docs/*.md

function emit(kind, value, extra) {
    printf "%s\t%s:%d\t%s\t%s\n", kind, FILENAME, FNR, value, extra
}

# Code: the t2exp commands, options and API names in one piece of code (a line or a span).
function scan_code(s, calls_only,    rest, m, before, seen_cmd, tok) {
    rest = s
    seen_cmd = ""
    # t2exp COMMAND: "t2exp" not part of a longer name (libt2exp, t2exp.h, t2exp::t2exp, $T2EXP).
    # Prose inside code ("the t2exp process", "; t2exp never ...") is not a command.
    while (match(rest, /(^|[^A-Za-z0-9_.$-])t2exp( +--home +[^ ]+)? +[a-z][a-z0-9-]*/)) {
        m = substr(rest, RSTART, RLENGTH)
        before = substr(rest, 1, RSTART)
        sub(/^[^t]*t2exp( +--home +[^ ]+)? +/, "", m)
        if (before !~ /(^|[^A-Za-z])([Tt]he|[Tt]his|[Tt]hat|[Aa]n?|[Oo]f|[Bb]y|[Ii]n|[Oo]n)[ ]*$/ && before !~ /[;,][ ]*$/) {
            emit("cmd", m, "")
            if (seen_cmd == "") seen_cmd = m
        }
        rest = substr(rest, RSTART + RLENGTH)
    }
    # --options, only where t2exp runs (a command above, or "t2exp --help"-style global options).
    if (seen_cmd != "" || s ~ /(^|[^A-Za-z0-9_.$-])t2exp +--/) {
        rest = s
        if (seen_cmd != "") { match(rest, /t2exp( +--home +[^ ]+)? +[a-z]/); rest = substr(rest, RSTART) }
        while (match(rest, /(^|[ ('"=\[])--[a-z][a-z0-9-]*/)) {
            tok = substr(rest, RSTART, RLENGTH)
            sub(/^[^-]*/, "", tok)
            emit("opt", tok, seen_cmd)
            rest = substr(rest, RSTART + RLENGTH)
        }
    }
    # API: t2_name / T2_NAME / t2__name; a name ending in _ is a pattern such as t2_hp_*.
    rest = s
    # "undefined symbol: t2_x" quotes the loader's error about a name that is meant not to exist.
    while (match(rest, /(^|[^A-Za-z0-9_])[tT]2_[A-Za-z0-9_]*/)) {
        tok = substr(rest, RSTART, RLENGTH)
        before = substr(rest, 1, RSTART)
        sub(/^[^tT]*/, "", tok)
        rest = substr(rest, RSTART + RLENGTH)
        if (tok ~ /_$/ || rest ~ /^(\*|…)/ || before ~ /undefined symbol: ?$/) continue
        if (calls_only && rest !~ /^ *\(/) continue
        emit("api", tok, "")
    }
}

# The code spans of a prose line. ``double`` spans split oddly; what they hold is skipped, which
# only ever loses names, never takes prose for code.
function spans(line,    n, parts, i) {
    n = split(line, parts, "`")
    for (i = 2; i <= n; i += 2) if (parts[i] != "") scan_code(parts[i], 0)
}

function config_key(k) { return k ~ /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/ }

FNR == 1 { fence = 0; prefix = ""; table_keys = 0; accepted = 0; refdoc = (FILENAME ~ /config-reference\.md$/) }

/^[ \t]*```/ {
    if (!fence) {
        fence = 1
        lang = $0
        sub(/^[ \t]*```/, "", lang)
        if (lang == "yaml" || lang == "yml") emit("yaml", FILENAME, FNR + 1)
    } else {
        fence = 0
        if (lang == "yaml" || lang == "yml") emit("yend", FILENAME, FNR)
    }
    next
}

fence {
    if (lang == "yaml" || lang == "yml") { printf "yline\t%s:%d\t%s\t\n", FILENAME, FNR, $0; next }
    scan_code($0, lang !~ /^(c|h|cpp)$/)
    next
}

{ spans($0) }

# The config reference: "## Heading" sets the key prefix; tables whose first column is "key".
refdoc && /^## / {
    h = tolower(substr($0, 4))
    gsub(/[^a-z0-9]+/, "_", h)
    sub(/^_+/, "", h)
    sub(/_+$/, "", h)
    prefix = (h == "top_level") ? "" : h "."
    table_keys = 0
    accepted = 0
    next
}
refdoc && /^\|/ {
    if (!table_keys && $0 ~ /^\|[ \t]*key[ \t]*\|/) { table_keys = 1; next }
    if (table_keys && $0 !~ /^\|[ \t]*-/) {
        n = split($0, cell, "|")
        k = split(cell[2], parts, "`")
        for (i = 2; i <= k; i += 2) if (config_key(parts[i])) emit("key", prefix parts[i], "table")
    }
    next
}
refdoc { table_keys = 0 }
refdoc && /^Accepted and ignored/ { accepted = 1 }
refdoc && accepted && /^[ \t]*$/ { accepted = 0 }
refdoc && accepted {
    k = split($0, parts, "`")
    for (i = 2; i <= k; i += 2) if (config_key(parts[i])) emit("key", prefix parts[i], "accepted")
}
