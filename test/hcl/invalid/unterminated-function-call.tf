# ERROR-BELOW@5: Unterminated function call
x = max(1, 2