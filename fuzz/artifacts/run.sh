#!/bin/sh
# run.sh SECONDS DB MEMPLAN [SEED]: the artifact campaign (campaign.py)
# over every real file of corpus/artifacts for SECONDS, its findings in
# results/failures/artifacts, recorded in the metrics store as target
# "artifacts", engine "mutation" (make fuzz TARGET=artifacts; fuzz-ci).
set -u
seconds=$1 db=$2 m=$3 seed=${4:-$(date +%s)}
out=$(/usr/bin/python3 fuzz/artifacts/campaign.py --cases 100000000 --seconds "$seconds" --seed "$seed" \
    --out results/failures/artifacts corpus/artifacts/pte/*.pte corpus/artifacts/tflite/*.tflite); rc=$?
echo "$out"
[ -n "$db" ] || exit $rc
n=$(echo "$out" | sed -n 's/.*: \([0-9]*\) cases.*/\1/p')
f=$(echo "$out" | sed -n 's/.* \([0-9]*\) findings$/\1/p')
seeds=$(ls corpus/artifacts/pte/*.pte corpus/artifacts/tflite/*.tflite | wc -l)
"$m" record-campaign --target artifacts --engine mutation --seconds "$seconds" --executions "${n:-0}" \
    --corpus-size "$seeds" --coverage 0 --crashes "${f:-0}" --db "$db" || exit 4
exit $rc
