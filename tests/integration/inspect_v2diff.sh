#!/usr/bin/env bash
# inspect_v2diff.sh: a differential fuzz of `gotracectl inspect` against Go
# 1.23's own reader of Go 1.22+ (v2) files (tests/lib/gtread: the code of
# `go tool trace -d=1`).  No BPF needed.
#
#  v2diff_replay: every saved disagreement (tests/fuzz/v2diff/, and
#     BUILD/v2diff.found/ of earlier runs not saved yet) is read again by
#     both: inspect may not call valid what Go refuses.
#  v2diff_fuzz: mutants of the v2 seeds (tests/fuzz/seeds/v2: traces Go
#     1.23 programs wrote of themselves, files of our encoder, Go's own
#     test traces; tests/lib/v2mutate.py: changed arguments, table ids,
#     frames, batch headers, events dropped, doubled, swapped or moved,
#     batches dropped, bits flipped, files cut), V2DIFF_N of them (600),
#     at most V2DIFF_SECONDS (40) of inspect runs: no mutant inspect calls
#     valid may be one Go refuses.  A disagreement is kept in
#     BUILD/v2diff.found/ (replayed by every later run until it is moved to
#     tests/fuzz/v2diff/ with its fix).  The other way round (inspect
#     stricter than Go) is counted, not failed.
#     GT_SEED=N reruns a run (its seed is printed).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh

gt_expect v2diff_replay v2diff_fuzz

seed=${GT_SEED:-$((RANDOM * 32768 + RANDOM))}
n=${V2DIFF_N:-600}
budget=${V2DIFF_SECONDS:-40}
found=$GT_BUILD/v2diff.found
reader=$GT_BUILD/go-v2serve/gtread123
echo "# seed $seed (GT_SEED=$seed reruns it)"
mkdir -p "$found"
if [ ! -x "$GTCTL" ]; then
	for c in "${gt_cases[@]}"; do fail "$c" "$GTCTL not built"; done
	gt_finish
fi
if ! tests/lib/gtread.sh "$GT_GO123" "$reader" >"$GT_TMP/gtread.log" 2>&1; then
	for c in "${gt_cases[@]}"; do fail "$c" "Go 1.23's reader not built: $(tail -3 "$GT_TMP/gtread.log")"; done
	gt_finish
fi

# differ LIST OUT: reads the files LIST names with Go's reader, then each
# with inspect (until the budget is spent, if one is given as $3); OUT
# gets "valid-go-refuses FILE: GO'S ERROR" and "stricter FILE" lines.
# Prints how many files inspect read.
differ() {
	local list=$1 out=$2 until=${3:-} verdict f rest rc checked=0
	"$reader" - <"$list" >"$GT_TMP/go.out"
	: >"$out"
	while read -r verdict f rest; do
		[ -n "$until" ] && [ "$SECONDS" -ge "$until" ] && break
		f=${f%:}
		"$GTCTL" inspect "$f" >"$GT_TMP/insp.out" 2>&1
		rc=$?
		checked=$((checked + 1))
		if [ $rc = 0 ] && [ "$verdict" = invalid ]; then
			echo "valid-go-refuses $f: ${rest:0:200}" >>"$out"
		elif [ $rc = 1 ] && [ "$verdict" = ok ]; then
			echo "stricter $f" >>"$out"
		elif [ $rc != 0 ] && [ $rc != 1 ]; then
			echo "valid-go-refuses $f: inspect exited $rc: $(tail -1 "$GT_TMP/insp.out")" >>"$out"
		fi
	done <"$GT_TMP/go.out"
	echo "$checked"
}

# replay
find tests/fuzz/v2diff "$found" -type f ! -name README | sort >"$GT_TMP/replay.list"
differ "$GT_TMP/replay.list" "$GT_TMP/replay.out" >/dev/null
gt_report v2diff_replay "$(grep '^valid-go-refuses' "$GT_TMP/replay.out" | head -5 | tr '\n' ' ')"

# fuzz: the mutants of every seed, as many per seed
mkdir -p "$GT_TMP/mut"
seeds=(tests/fuzz/seeds/v2/*)
per=$(( (n + ${#seeds[@]} - 1) / ${#seeds[@]} ))
for s in "${seeds[@]}"; do
	python3 tests/lib/v2mutate.py "$s" "$GT_TMP/mut" "$per" "$seed" >>"$GT_TMP/mutations" ||
		fail v2diff_fuzz "v2mutate.py failed on $s"
done
# in a shuffled order, so that a spent budget leaves out no seed's whole lot
find "$GT_TMP/mut" -type f | shuf --random-source=<(yes "$seed") >"$GT_TMP/mut.list"
checked=$(differ "$GT_TMP/mut.list" "$GT_TMP/fuzz.out" $((SECONDS + budget)))
why=
while read -r _ f rest; do
	f=${f%:}
	cp "$f" "$found/$(basename "$f").$seed"
	why="$why $(basename "$f") ($(grep "^$(basename "$f") " "$GT_TMP/mutations" | cut -d' ' -f2-)): ${rest:0:150};"
done < <(grep '^valid-go-refuses' "$GT_TMP/fuzz.out")
[ -n "$why" ] && why="inspect calls valid what Go 1.23 refuses (kept in $found; move them to tests/fuzz/v2diff/ with the fix):$why"
gt_report v2diff_fuzz "$why"
echo "# $checked of $(wc -l <"$GT_TMP/mut.list") mutants read by both;" \
	"$(grep -c '^ok ' "$GT_TMP/go.out") valid for Go;" \
	"$(grep -c '^stricter' "$GT_TMP/fuzz.out") invalid for inspect only"

gt_finish
