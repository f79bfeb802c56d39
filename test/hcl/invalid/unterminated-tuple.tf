# ERROR-BELOW@18: Unterminated tuple constructor expression
azs = ["a", "b", [1, 2