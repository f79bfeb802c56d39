# The file ends where an expression is expected.
# ERROR-BELOW@5: Missing expression
a = 