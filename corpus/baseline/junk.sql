not sql at all
