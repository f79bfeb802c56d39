variable "ok" {
  default = 1
}

resource "aws_instance" "web" { # ERROR@31: Unclosed configuration block
  ami = "ami-123"

  tags = {
    Name = "web"
  }
