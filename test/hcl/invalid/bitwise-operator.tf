x = true & false # ERROR@10: Unsupported operator
