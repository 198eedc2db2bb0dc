#!/bin/bash
# The dev answers that calibration is fitted on and the "not in the graph" acceptance
# is measured on (plan, rok, qsm, pg, ksl, and qsm/ksl/rok+plan with the path memory and
# without, in the planner's zero-shot mode, as by default):
# MetaQA 1/2/3-hop dev (fold 0 of 5, seed 7, 100 each; pg 50), the
# generated unanswerable-metaqa dev set (200; pg 40) and WebQuestions fold 0 (200 by default; the
# +plan variants with the WebQuestions memory), each
# answer keeping its confidence basis (answer_relation_gap on). Resumable: a finished
# run leaves OUT/NAME.ok.
#
#   benchmarks/calibration_runs.sh METAQA_STORE FB15K_STORE DATA_DIR OUT METAQA_MEMORY WEBQ_MEMORY [WEBQ_LIMIT [METAQA_GRAPH_MEMORY FB15K_GRAPH_MEMORY]]
#
# The last two, memories from `kgmw learn --from-graph` (FB15k-237's with
# KGMW_PLAN_MAX_HOPS=2), add the runs of `plan` in mode generated (mq-planG, un-planG, wq-planG).
#   .venv/bin/python benchmarks/calibration_table.py OUT 0.3,0.4,0.5
#   kgmw calibrate OUT/* --out middleware/methods/calibration.json
set -u
# kgmw from the project's virtual environment when there is one, else from PATH
HERE=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$HERE/.venv/bin/kgmw" ] && export PATH="$HERE/.venv/bin:$PATH"
METAQA=$1 FB15K=$2 DATA=$3 F=$4 MEM=$5 WQMEM=$6 WQ_LIMIT=${7:-200} GMEM=${8:-} GWQMEM=${9:-}
export KGMW_ANSWER_RELATION_GAP=true
mkdir -p "$F"
ev() { out=$1; shift; [ -f "$F/$out.ok" ] && return; rm -rf "${F:?}/$out"
       kgmw eval "$@" --out "$F/$out" --no-progress > "$F/$out.log" 2>&1 && touch "$F/$out.ok"; }
MQ="--dataset metaqa-1hop --dataset metaqa-2hop --dataset metaqa-3hop --data-dir $DATA --split dev --folds 5 --fold 0 --seed 7 --store $METAQA"
UN="--dataset unanswerable-metaqa --data-dir $DATA --split dev --store $METAQA"
WQ="--dataset webquestions --split test --only-in-graph --data-dir $DATA --folds 5 --fold 0 --limit $WQ_LIMIT --seed 7 --store $FB15K"
ev un-plan $UN --method plan
ev mq-plan $MQ --limit 100 --method plan
ev wq-plan ${WQ/--limit $WQ_LIMIT /} --method plan  # zero-shot, default hops: all of fold 0
KGMW_PLAN_MEMORY=$MEM ev un-planL $UN --method plan
KGMW_PLAN_MEMORY=$MEM ev mq-planL $MQ --limit 100 --method plan
KGMW_PLAN_MAX_HOPS=2 KGMW_PLAN_MAX_PLANS=8 KGMW_PLAN_MEMORY=$WQMEM ev wq-planL $WQ --method plan
if [ -n "$GMEM" ] && [ -n "$GWQMEM" ]; then
  KGMW_PLAN_MEMORY=$GMEM ev un-planG $UN --method plan
  KGMW_PLAN_MEMORY=$GMEM ev mq-planG $MQ --limit 100 --method plan
  KGMW_PLAN_MAX_HOPS=2 KGMW_PLAN_MAX_PLANS=8 KGMW_PLAN_MEMORY=$GWQMEM ev wq-planG $WQ --method plan
fi
for m in rok qsm ksl; do ev un-$m $UN --method $m; ev mq-$m $MQ --limit 100 --method $m; done
for m in rok qsm pg; do ev wq-$m $WQ --method $m; done
ev mq-pg $MQ --limit 50 --method pg
ev un-pg $UN --limit 40 --method pg
# no memory, as by default: the planner's zero-shot mode (fewer MetaQA questions for
# the variants with more LLM calls)
ev mq-ksl+planZ $MQ --limit 100 --method ksl+plan
ev un-ksl+planZ $UN --method ksl+plan
ev un-rok+planZ $UN --method rok+plan
ev mq-rok+planZ $MQ --limit 30 --method rok+plan
ev un-pg+planZ $UN --limit 40 --method pg+plan
ev mq-pg+planZ $MQ --limit 10 --method pg+plan
ev un-qsm+planZ $UN --limit 40 --method qsm+plan
ev mq-qsm+planZ $MQ --limit 10 --method qsm+plan
for m in qsm+plan ksl+plan rok+plan; do
  KGMW_PLAN_MEMORY=$MEM ev mq-$m $MQ --limit 100 --method $m
  KGMW_PLAN_MEMORY=$MEM ev un-$m $UN --method $m
  KGMW_PLAN_MAX_HOPS=2 KGMW_PLAN_MAX_PLANS=8 KGMW_PLAN_MEMORY=$WQMEM ev wq-$m $WQ --method $m
done
