# Expressions exercising the whole operator grammar.

locals {
  arithmetic  = 1 + 2 * 3 - 4 / 2 % 3
  negation    = -var.offset + -(2 * 3)
  precedence  = !var.a || var.b && var.c == var.d != false
  comparisons = [1 < 2, 2 <= 2, 3 > 2, 3 >= 3]
  conditional = var.a ? var.b ? "ab" : "a" : var.c ? "c" : "none"
  numbers     = [0, 42, 3.14159, 1e3, 2.5E-3, 6.02e+23]
  keywords    = [true, false, null]
  parens      = (((1 + 2)) * 3)
  index_expr  = var.list[length(var.list) - 1]
  string_key  = var.map["key with spaces"]
  legacy      = var.list.0
  legacy_attr = var.instances.0.id
  splat_attr  = var.instances.*.id
  splat_full  = var.instances[*].network_interface[0].ip
  splat_deep  = var.groups[*].members[*].name
  call_expand = max(var.numbers...)
  call_multi = format(
    "%s-%s-%03d",
    var.prefix,
    var.name,
    var.index,
  )

  empty_tuple  = []
  empty_object = {}
  one_line     = { a = 1, b = "two", c = [3] }
  colon_object = { "a" : 1, "b" : 2 }
  computed_key = {
    (var.key_name)        = "value"
    "${var.prefix}-name"  = "templated key"
    plain                 = "identifier key"
    "quoted"              = "string key"
    for                   = "reserved-looking key after the first item"
  }
  nested = {
    level1 = {
      level2 = {
        level3 = [{ deep = [1, [2, [3]]] }]
      }
    }
  }
  trailing_comma = [
    "a",
    "b",
  ]
  multiline_condition = (
    var.environment == "prod"
    ? 3
    : 1
  )
  for_if    = [for i, v in var.list : upper(v) if i % 2 == 0]
  for_obj   = { for k, v in var.map : upper(k) => v }
  for_group = { for v in var.list : substr(v, 0, 1) => v... if v != "" }
}

output "single_line_block" { value = local.arithmetic }

output "sensitive_value" {
  value     = var.secret
  sensitive = true
}

output "unicode" {
  value = "日本語 — naïve café ${local.nested.level1.level2.level3[0].deep[1][1][0]}"
}

resource "aws_security_group_rule" "ingress" {
  count             = length(var.ingress_cidrs) > 0 ? 1 : 0
  type              = "ingress"
  from_port         = 443
  to_port           = 443
  protocol          = "tcp"
  cidr_blocks       = var.ingress_cidrs
  security_group_id = aws_security_group.this.id
}
