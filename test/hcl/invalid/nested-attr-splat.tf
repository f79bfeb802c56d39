x = var.list.*.* # ERROR@16: Nested splat expression not allowed
