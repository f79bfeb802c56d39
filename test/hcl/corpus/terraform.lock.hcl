# This file is maintained automatically by "terraform init".
# Manual edits may be lost in future updates.

provider "registry.terraform.io/hashicorp/aws" {
  version     = "5.46.0"
  constraints = ">= 4.57.0, >= 5.46.0, < 6.0.0"
  hashes = [
    "h1:d0Mf33mbbQujZ/JaYkqmH5gZGvP+iEIWf9yBSiOwimE=",
    "zh:05ae6180a7f23071435f6e5e59c19af0b6c5da42ee600c6c1568c8660214d548",
    "zh:0d878d1565d5e57ce6b34ec5f04b28662044a50c999ec5770c374aa1b58b4f0c",
    "zh:25ef1467af2514d8ba2f6e0113a4d1fd3e6ed2d51d2ab50b2ac6bdf4e1e43ba5",
    "zh:9b12af85486a96aedd8d7984b0ff811a4b42e3d88dad1a3fb4c0b580d04fa425",
  ]
}

provider "registry.terraform.io/hashicorp/kubernetes" {
  version     = "2.30.0"
  constraints = "~> 2.30"
  hashes = [
    "h1:z3HW2nlsmn2k+BU6u1WLmu8c6Ts6fTQVjSDi2KxE6uo=",
    "zh:06531333a72fe6d2829f37a328e08a3fc4ed66226344a003b62418a834ac6c69",
  ]
}

provider "registry.opentofu.org/hashicorp/helm" {
  version = "2.13.2"
  hashes = [
    "h1:nlSqCo0PajJzjSlx0lXNUq1YcOr8p9b3ahcUUYN2pEg=",
  ]
}

provider "tf.example.com/platform/corp-internal" {
  version     = "0.4.7"
  constraints = "~> 0.4.0"
  hashes = [
    "h1:47lYOZ4yUXZVDKYhSmB6dVNYPw/ZGj1hFnYK/gzn2X8=",
    "zh:ae1ba8c7a2ef0d2ba1bdfa0ce53b4bc1d36d8de4e1ccfd40c6b7a1b6aeaad5e9",
  ]
}
