x = { a 1 } # ERROR@9: Missing key/value separator
