terraform # ERROR@1: Argument or block definition required
