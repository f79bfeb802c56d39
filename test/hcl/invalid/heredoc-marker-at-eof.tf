# Terraform requires a newline after the closing marker (hashicorp/terraform#31450).
policy = <<POLICY
{}
# At the end of the file, after the marker (terraform 1.11.4 validate -json).
# ERROR-BELOW@7: Unterminated template string
POLICY