// A string that is not UTF-8 is a located error when the graph is read (it
// was an exception escaping to std::terminate when the manifest was written).
