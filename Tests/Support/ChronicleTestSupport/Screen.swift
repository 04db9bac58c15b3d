// MARK: - Screens

/// The screens of the tests' bank app: the routes `chronicle-probe store-navigate` navigates
/// and the navigation tests reopen.
public enum Screen: Codable, Hashable, Sendable {
  /// The list of accounts.
  case accounts
  /// One account.
  case account(String)
  /// A transfer from an account.
  case transfer(from: String)
  /// Settings, sign-in and about: sheets and covers.
  case settings, signIn, about
}
