#!/usr/bin/env bash
# Runs a libFuzzer target for a bounded time on a seeded corpus.
# Usage: run-fuzz.sh FUZZER SECONDS model|key|metadata|csv|limits [extra libFuzzer flags...]
#   model: the repository's seed models (tests/fuzz/seeds, regressions) and,
#          when ../shared is present, the real model files; model.dict
#   key:   tests/fuzz/key-seeds
#   metadata: tests/fuzz/metadata-seeds and MIOpen's metadata files from ../shared
#   csv:   tests/fuzz/csv-seeds and the start of each corpus file (data/networks)
#   limits: tests/fuzz/limits-seeds (the meta table's limits text)
# Exits non-zero if the fuzzer finds a crash, leak or timeout; the input is
# left in <build>/fuzz-artifacts/ (copy it to tests/fuzz/regressions/).
set -euo pipefail
fuzzer=$1
seconds=$2
kind=${3:-model}
shift 3 || shift $#
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(dirname "$fuzzer")
corpus="$work/fuzz-corpus-$kind"
artifacts="$work/fuzz-artifacts"
mkdir -p "$corpus" "$artifacts"
dict=()
if [ "$kind" = key ]; then
  cp "$root"/tests/fuzz/key-seeds/* "$corpus/"
elif [ "$kind" = limits ]; then
  cp "$root"/tests/fuzz/limits-seeds/* "$corpus/"
elif [ "$kind" = csv ]; then
  cp "$root"/tests/fuzz/csv-seeds/* "$corpus/"
  for f in "$root"/data/networks/*.csv; do head -c 60000 "$f" > "$corpus/$(basename "$f")"; done
elif [ "$kind" = metadata ]; then
  dict=(-dict="$root/tests/fuzz/model.dict")
  cp "$root"/tests/fuzz/metadata-seeds/* "$corpus/"
  cp "$root"/models/*_metadata.tn.model "$corpus/" # bounds, limits, weights costs, safe lists, envelope
  if [ -d "$root/../shared/miopen-ai-models" ]; then
    cp "$root"/../shared/miopen-ai-models/*metadata* "$corpus/"
  fi
else
  dict=(-dict="$root/tests/fuzz/model.dict")
  cp "$root"/tests/fuzz/seeds/* "$corpus/"
  cp "$root"/tests/fuzz/regressions/* "$corpus/" 2>/dev/null || true
  shared="$root/../shared"
  if [ -d "$shared" ]; then
    cp "$shared"/fdeep-conformance/*.json "$corpus/"
    cp "$shared"/miopen-ai-models/*.model "$corpus/"
  else
    echo "run-fuzz: ../shared absent: seeding with the repository's seeds only"
  fi
fi
chmod u+w "$corpus"/*
echo "run-fuzz: $(basename "$fuzzer") for ${seconds}s on $(ls "$corpus" | wc -l) corpus files"
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  "${dict[@]}" -artifact_prefix="$artifacts/" "$@" "$corpus" 2>&1 |
  grep -E "^(#[0-9]+ +(INITED|DONE)|stat::number_of_executed_units|stat::peak_rss|==[0-9]+== ?ERROR|SUMMARY|artifact_prefix|Test unit written|[A-Za-z/._-]+:[0-9]+:[0-9]+: runtime error)"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "run-fuzz: FAILED (exit $status): see $artifacts"
else
  echo "run-fuzz: ${seconds}s without a finding"
fi
exit "$status"
