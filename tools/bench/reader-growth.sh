#!/usr/bin/env bash
# How much one kind of reader beside a live writer grows the writer's data file.
#
#   tools/bench/reader-growth.sh [KIND ...]     (default: every kind)
#
# KIND: none, head (`export | head -c 1000` again and again), stall (an export whose consumer
# never reads), verify (again and again), killverify (killed after 150 ms, again and again),
# tail (`tail --follow`). Each run: 1,000 entries, then a writer process appends single entries
# for 5 s (`chronicle-log-probe append-for`) with the reader beside it; prints the growth of
# data.mdb per appended entry. Uses the debug build: `swift build --enable-all-traits --build-tests` first
# (BUILD=.build/release for a release build of logtool and the probe).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD:-.build/debug}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/reader-growth-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(none head stall verify killverify tail)
for kind in "${kinds[@]}"; do
  log="$scratch/log-$kind"
  "$build/chronicle-log-probe" append "$log" 1000 normal >/dev/null
  before=$(stat -c %s "$log/data.mdb")
  "$build/chronicle-log-probe" append-for "$log" 5000 >"$scratch/writer-$kind" &
  writer=$!
  sleep 0.3
  case $kind in
    none) ;;
    head) while kill -0 $writer 2>/dev/null; do "$build/logtool" export "$log" -o - | head -c 1000 >/dev/null; done ;;
    stall) ("$build/logtool" export "$log" -o - | sleep 6) & ;;
    verify) while kill -0 $writer 2>/dev/null; do "$build/logtool" verify "$log" >/dev/null || true; done ;;
    killverify)
      while kill -0 $writer 2>/dev/null; do
        "$build/logtool" verify "$log" >/dev/null 2>&1 &
        sleep 0.15
        kill -9 $! 2>/dev/null || true
        wait $! 2>/dev/null || true
      done ;;
    tail) "$build/logtool" tail "$log" --follow >/dev/null & follower=$!; sleep 5.5; kill $follower ;;
    *) echo "reader-growth: unknown kind $kind" >&2; exit 2 ;;
  esac
  wait $writer
  appended=$(tail -1 "$scratch/writer-$kind" | awk '{print $2}')
  after=$(stat -c %s "$log/data.mdb")
  echo "$kind: $appended entries appended, $(( (after - before) / appended )) bytes of data.mdb per entry"
done
wait
