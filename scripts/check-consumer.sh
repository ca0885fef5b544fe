#!/usr/bin/env bash
# Installs the library and builds and runs separate projects that depend on it: src/it/consumer (Maven)
# and src/it/consumer-gradle (Gradle, when `gradle` is on the PATH or COMLRL_GRADLE names one), each an
# application on SLF4J 1.7 + logback 1.2 running the seed's length-ratio example. Checks that the example
# trains with no JVM flag and no setup copied from this project, that the application's own log lines
# still reach logback, that one Jackson version is on its class path, and that the installed artifact
# builds offline afterwards.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
(cd "$root" && mvn -q -B -DskipTests install)
(cd "$root" && mvn -o -q -B -DskipTests install) # every plugin pinned: offline after one online build
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# $1: the build's name, $2: its project directory, $3: its run class path (':'-separated)
check_run() {
  local name="$1" dir="$2" cp="$3" out
  out="$(cd "$dir" && java -cp "$cp" demo.Main 2>&1)"
  fail() { echo "check-consumer ($name): $1"; echo "$out" | tail -20; exit 1; }
  grep -q 'INFO demo.Main - application log line before training' <<<"$out" || fail "the application's log line before training is missing"
  grep -q 'INFO demo.Main - application log line after training' <<<"$out" || fail "the application's log line after training is missing"
  grep -q 'eval/turn_1/reward_mean=' <<<"$out" || fail "the example printed no evaluation metrics"
  if tr ':' '\n' <<<"$cp" | grep -o 'jackson-core-[0-9.]*jar' | sort -u | awk 'END { exit NR == 1 ? 0 : 1 }'; then :; else
    fail "more than one jackson-core version on the application's class path"
  fi
  echo "check-consumer: ok ($name: the example trained in a separate project; its logback lines are intact)"
}

# the application's sources: its Main and the seed example, as the user would copy them
sources() {
  mkdir -p "$1/src"
  cp -r "$root/src/it/consumer/src/." "$1/src/"
  sed -e 's/^package comlrl.examples;/package demo;/' "$root/examples/java/comlrl/examples/LengthRatioExample.java" \
    > "$1/src/main/java/demo/LengthRatioExample.java"
}

maven="$work/maven"
mkdir -p "$maven" && cp "$root/src/it/consumer/pom.xml" "$maven/" && sources "$maven"
(cd "$maven" && mvn -q -B package dependency:build-classpath -Dmdep.outputFile=cp.txt)
check_run maven "$maven" "target/classes:$(cat "$maven/cp.txt")"

gradle="${COMLRL_GRADLE:-$(command -v gradle || true)}"
if [ -n "$gradle" ]; then
  g="$work/gradle"
  mkdir -p "$g" && cp "$root/src/it/consumer-gradle/"*.gradle "$g/" && sources "$g"
  cp_line="$(cd "$g" && "$gradle" -q --no-daemon printClasspath 2>/dev/null | grep '^CLASSPATH=')" \
    || { echo "check-consumer (gradle): the build failed"; (cd "$g" && "$gradle" --no-daemon printClasspath 2>&1 | tail -20); exit 1; }
  check_run "gradle $("$gradle" --version 2>/dev/null | awk '/^Gradle /{print $2}')" "$g" "${cp_line#CLASSPATH=}"
else
  echo "check-consumer: no gradle on the PATH (Debian: apt-get install gradle): the Gradle project was not built"
fi
