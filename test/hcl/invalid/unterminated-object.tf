# ERROR-BELOW@8: Unterminated object constructor expression
tags = { Name = "x"