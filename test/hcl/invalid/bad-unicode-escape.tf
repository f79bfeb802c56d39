s = "caf\u00G9" # ERROR@9: Invalid escape sequence
