a = 1
# ERROR-BELOW@1: Unterminated comment
/* this comment
never ends
