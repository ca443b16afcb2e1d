#!/bin/sh
# The tests: `check ARGS EXPECTED` runs greet.sh with ARGS and compares its lines, joined with `|`.
fail=0
check() {
    actual=$(sh ./greet.sh $1 | tr '\n' '|')
    if [ "$actual" = "$2" ]; then
        echo "ok    greet $1"
    else
        echo "FAIL  greet $1: got '$actual', want '$2'"
        fail=1
    fi
}
check "" "Hello, world!|"
check "Ada" "Hello, Ada!|"
check "Ada Linus" "Hello, Ada!|Hello, Linus!|"
if [ "$fail" -eq 0 ]; then echo "all tests passed"; fi
exit "$fail"
