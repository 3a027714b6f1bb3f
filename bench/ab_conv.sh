#!/usr/bin/env bash
# ab_conv.sh -- two convsel binaries side by side on the same problems:
# interleaved rounds (the order of old and new alternates each round), each
# run a 'convsel conv ... --iter I' whose median is one sample; prints per
# case the median of the samples with their range, and old/new.
#
#   bench/ab_conv.sh OLD_BINARY NEW_BINARY CASES [ROUNDS]
#
# CASES: one case per line, 'name  convsel-conv-flags' (# starts a comment),
# e.g. 'frcnn_head_b2  -n 2 -c 256 -H 13 -W 17 -k 3 -y 1 -x 1 -p 0 -q 0
# -S gemm_1x1 -i 300 --threads 2'. Both binaries must accept the flags;
# a run that fails stops the script (convsel conv verifies nothing, so a
# solver change is verified by its tests, not here).
set -euo pipefail

usage() { sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; } # the comment block above, whole
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    usage
    exit 0
fi
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
    echo "ab_conv.sh: expected OLD_BINARY NEW_BINARY CASES [ROUNDS], got $# arguments" >&2
    usage >&2
    exit 2
fi
old=$1 new=$2 cases=$3 rounds=${4:-7}
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "ab_conv.sh: $b: not an executable" >&2; exit 2; }
done
[ -r "$cases" ] || { echo "ab_conv.sh: $cases: cannot read the cases" >&2; exit 2; }
case $rounds in '' | *[!0-9]* | 0) echo "ab_conv.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;; esac

samples=$(mktemp)
trap 'rm -f "$samples"' EXIT
one() { # binary label name flags...
    local bin=$1 label=$2 name=$3
    shift 3
    local out
    if ! out=$("$bin" conv "$@" 2>&1); then
        echo "ab_conv.sh: $name ($label): convsel conv failed:" >&2
        echo "$out" >&2
        exit 1
    fi
    local ms
    ms=$(echo "$out" | awk '$1 == "time" && $2 == "median" { print $3; exit }')
    [ -n "$ms" ] || { echo "ab_conv.sh: $name ($label): no 'time median' line in:" >&2; echo "$out" >&2; exit 1; }
    echo "$name $label $ms" >> "$samples"
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $rounds rounds, load $(cut -d' ' -f1 /proc/loadavg) at the start"
for ((r = 0; r < rounds; r++)); do
    while read -r name flags; do
        case $name in '' | '#'*) continue ;; esac
        # shellcheck disable=SC2086 # the flags are words
        if ((r % 2 == 0)); then
            one "$old" old "$name" $flags
            one "$new" new "$name" $flags
        else
            one "$new" new "$name" $flags
            one "$old" old "$name" $flags
        fi
    done < "$cases"
done
echo "# load $(cut -d' ' -f1 /proc/loadavg) at the end"

while read -r name _; do
    case $name in '' | '#'*) continue ;; esac
    for label in old new; do
        awk -v n="$name" -v l="$label" '$1 == n && $2 == l { print $3 }' "$samples" | sort -g |
            awk -v l="$label" '{ v[NR] = $1 } END {
                m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%s %.4f %.4f %.4f\n", l, m, v[1], v[NR] }'
    done | awk -v n="$name" '{ l[NR] = $1; m[NR] = $2; lo[NR] = $3; hi[NR] = $4 } END {
        printf "%-22s old %9.4f ms [%.4f-%.4f]  new %9.4f ms [%.4f-%.4f]  old/new %5.2f\n",
               n, m[1], lo[1], hi[1], m[2], lo[2], hi[2], m[1] / m[2] }'
done < "$cases"
