/* pcsc-lite for Swift: everything is in include/shim.h. SwiftPM builds a C target from at
   least one source file; this one holds nothing. */
