x = { a = 1 b = 2 } # ERROR@13: Missing attribute separator
