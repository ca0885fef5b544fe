#!/usr/bin/env bash
# Installs the library and builds and runs a separate Maven project that depends on it (src/it/consumer:
# an application on SLF4J 1.7 + logback 1.2 running the seed's length-ratio example). Checks that the
# example trains with no JVM flag and no setup copied from this project, that the application's own log
# lines still reach logback, and that the installed artifact builds offline afterwards.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
(cd "$root" && mvn -q -B -DskipTests install)
(cd "$root" && mvn -o -q -B -DskipTests install) # every plugin pinned: offline after one online build
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$root/src/it/consumer/." "$work/"
sed -e 's/^package comlrl.examples;/package demo;/' "$root/examples/java/comlrl/examples/LengthRatioExample.java" \
  > "$work/src/main/java/demo/LengthRatioExample.java"
(cd "$work" && mvn -q -B package dependency:build-classpath -Dmdep.outputFile=cp.txt)
out="$(cd "$work" && java -cp "target/classes:$(cat cp.txt)" demo.Main 2>&1)"
fail() { echo "check-consumer: $1"; echo "$out" | tail -20; exit 1; }
grep -q 'INFO demo.Main - application log line before training' <<<"$out" || fail "the application's log line before training is missing"
grep -q 'INFO demo.Main - application log line after training' <<<"$out" || fail "the application's log line after training is missing"
grep -q 'eval/turn_1/reward_mean=' <<<"$out" || fail "the example printed no evaluation metrics"
if tr ':' '\n' < "$work/cp.txt" | grep -o 'jackson-core-[0-9.]*jar' | sort -u | awk 'END { exit NR == 1 ? 0 : 1 }'; then :; else
  fail "more than one jackson-core version on the application's class path"
fi
echo "check-consumer: ok (the example trained in a separate project; its logback lines are intact)"
