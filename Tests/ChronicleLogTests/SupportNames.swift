import TestSupport

// MARK: - Support names for files that do not import TestSupport

/// `TestSupport`'s temporary directory, for this target's files that do not import the module.
typealias TemporaryDirectory = TestSupport.TemporaryDirectory

/// `TestSupport`'s value of every shape, for this target's files that do not import the module.
typealias Sample = TestSupport.Sample
