# Demo root module for the bundled mirror (../registry.example.test): both
# providers resolve from the packed filesystem mirror, e.g.
#   terraform providers lock -fs-mirror=.. -platform=linux_amd64 -platform=darwin_arm64
# demo "~> 1.0" selects 1.1.0, the newest 1.x in the mirror.
terraform {
  required_providers {
    demo = {
      source  = "registry.example.test/acme/demo"
      version = "~> 1.0"
    }
    tools = {
      source  = "registry.example.test/acme/tools"
      version = ">= 0.3"
    }
  }
}
