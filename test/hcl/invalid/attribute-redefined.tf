resource "aws_s3_bucket" "b" {
  bucket = "one"
  acl    = "private"
  bucket = "two" # ERROR@3: Attribute redefined
}
