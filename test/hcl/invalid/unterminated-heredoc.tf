locals {
  text = <<EOT
    line one
    line two
  EOTX
}
# Reported at the end of the file, as terraform 1.11.4 validate -json reports it.
# ERROR-BELOW@1: Unterminated template string
