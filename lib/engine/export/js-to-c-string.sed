# Turn a text file into the lines of a C string literal.
s/\\/\\\\/g
s/"/\\"/g
s/^/"/
s/$/\\n"/
