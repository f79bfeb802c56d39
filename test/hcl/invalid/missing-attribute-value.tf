x = {
  a # ERROR: Missing attribute value
}
