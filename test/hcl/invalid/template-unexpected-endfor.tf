x = "a%{ endfor }b" # ERROR@7: Unexpected endfor directive
