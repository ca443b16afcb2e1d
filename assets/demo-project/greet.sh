#!/bin/sh
# greet: prints a greeting for each name given, or for the world.
set -eu

greeting="Hello"

# With no names, greet everyone.
if [ "$#" -eq 0 ]; then
    set -- world
fi

# One line per name, in the order given.
for name in "$@"; do
    echo "$greeting, $name"
done
