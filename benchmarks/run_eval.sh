#!/usr/bin/env bash
# The quality benchmark in docs/benchmarks.md: RoK, IO and CoT with the embedded model
# on 200 seeded MetaQA dev questions per hop count and 200 WebQuestions questions whose
# topic entity is in FB15k-237. Run from the repository root with kgmw on PATH:
#
#   DATA=../shared/datasets bash benchmarks/run_eval.sh
#
# An interrupted run resumes where it stopped when started again.
set -euo pipefail
DATA=${DATA:-../shared/datasets}
KG=${KG:-$HOME/kg}
OUT=${OUT:-benchmarks/results/eval-embedded}
LIMIT=${LIMIT:-200}
SEED=${SEED:-7}
METHODS=(--method rok --method io --method cot)

[ -e "$KG/metaqa/current" ] || kgmw load "$DATA/metaqa/kb.txt" --store "$KG/metaqa" --profile metaqa
[ -e "$KG/fb15k/current" ] || kgmw load "$DATA"/fb15k-237/{train,valid,test}.txt \
  "$DATA/fb15k-237/entity2text.txt" "$DATA/fb15k-237/relation2text.txt" \
  --store "$KG/fb15k" --profile freebase

for hops in 1 2 3; do
  kgmw eval --dataset "metaqa-${hops}hop" --split dev --data-dir "$DATA" --limit "$LIMIT" \
    --seed "$SEED" "${METHODS[@]}" --store "$KG/metaqa" --out "$OUT" --no-cache
done
# WebQuestions ships only its test split; it is reported here, never tuned on.
kgmw eval --dataset webquestions --split test --only-in-graph --data-dir "$DATA" \
  --limit "$LIMIT" --seed "$SEED" "${METHODS[@]}" --store "$KG/fb15k" --out "$OUT" --no-cache
kgmw report "$OUT"
