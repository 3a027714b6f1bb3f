#!/bin/sh
# make-default-model.sh -- regenerates the shipped ranking model,
# models/<isa>.tn.model and models/<isa>_metadata.tn.model, on the machine
# it runs on (its ISA names the files). This is exactly how the committed
# model was made; see models/README.md for the figures it gave.
#
#   scripts/make-default-model.sh [DB]      (default DB: build/tune.db)
#
# The tuning takes about 45 minutes on two cores and must run on a quiet
# machine: the noise guard waits out (and leaves out) what it sees, but
# nothing else should run. It is resumable: run it again after an
# interruption. The 30-problem benchmark suite is kept out of training.
set -eu
cd "$(dirname "$0")/.."
db=${1:-build/tune.db}
suite=../shared/reference/conv-suite.csv

build/convsel tune --sample 3500 --seed 1 --threads 2 --db "$db"
if [ -f "$suite" ]; then
    exclude="--exclude $suite"
else
    echo "make-default-model: $suite not found: the suite cannot be excluded" >&2
    exit 1
fi
build/convsel train --db "$db" --out models $exclude --hidden 64 --epochs 300 --seed 1 --ensemble 3
build/convsel eval --db "$db" --model models
