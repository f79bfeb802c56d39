x = "echo ${HOME var}" # ERROR@18: Extra characters after interpolation expression
