// The gpsd client and the I2C bus build on the POSIX layer; their users get both with one import.
@_exported import BearingPOSIX
