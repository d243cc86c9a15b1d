// Nesting deep enough to exhaust the recursive parser's stack (a SIGSEGV) is
// refused on the text, at the place, before parsing.
