# Hash comment at the top of the file.
// Double-slash comment.
/* Block comment on one line. */
/*
 * Multi-line block comment,
 * in the JavaDoc style.
 */

/* a block comment before a block */ resource "null_resource" "a" { # trailing hash comment
  // comment inside a block
  triggers = { # comment after an opening brace
    a = "1" # comment after an item
    b = "2" // another
    /* before an item */ c = "3"
  }

  count = 1 /* inline after a value */
}

locals {
	# This block is indented with tabs, which HCL treats as whitespace.
	tabbed = [
		"one", # first
		"two", /* second */
		# a comment line inside a tuple
		"three",
	]
	url     = "http://example.com/#not-a-comment" # but this is
	path    = "//also/not/a/comment"
	star    = "/* not a comment */"
	product = 2 * /* inline */ 3
	ratio   = 10 / 2 // division then a comment
}

variable "commented" {
  type = object({
    # comments inside a type expression
    name = string // the name
    /* the size */ size = number
  })
  default = {
    name = "x"
    size = 1
  }
}

/* A block comment
   spanning lines # with hash
   // and slashes
*/
# Final comment without a trailing newline