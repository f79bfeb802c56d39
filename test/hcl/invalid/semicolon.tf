a = 1; # ERROR@6: Invalid character
