provider "aws" {
  region = "eu-west-1", # ERROR@23: Unexpected comma after argument
  profile = "default"
}
