package templates

// DemoBakerAlt exposes demoBakerAlt to the external tests of this package.
var DemoBakerAlt = demoBakerAlt
