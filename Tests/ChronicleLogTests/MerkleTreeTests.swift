import Crypto
import Foundation
import Testing

@testable import ChronicleLog

/// RFC 9162 §2.1 written the naive way, from the leaves, to check the stored-subtree algorithms against.
private enum NaiveTree {
  static func hash(_ leaves: ArraySlice<[UInt8]>) -> [UInt8] {
    if leaves.isEmpty { return Array(SHA256.hash(data: [UInt8]())) }
    if leaves.count == 1 { return leaves.first! }
    var k = 1
    while k * 2 < leaves.count { k *= 2 }
    let mid = leaves.startIndex + k
    return MerkleHash.node(hash(leaves[..<mid]), hash(leaves[mid...]))
  }

  static func path(_ m: Int, _ leaves: ArraySlice<[UInt8]>) -> [[UInt8]] {
    guard leaves.count > 1 else { return [] }
    var k = 1
    while k * 2 < leaves.count { k *= 2 }
    let mid = leaves.startIndex + k
    if m < k { return path(m, leaves[..<mid]) + [hash(leaves[mid...])] }
    return path(m - k, leaves[mid...]) + [hash(leaves[..<mid])]
  }

  static func subproof(_ m: Int, _ leaves: ArraySlice<[UInt8]>, _ b: Bool) -> [[UInt8]] {
    if m == leaves.count { return b ? [] : [hash(leaves)] }
    var k = 1
    while k * 2 < leaves.count { k *= 2 }
    let mid = leaves.startIndex + k
    if m <= k { return subproof(m, leaves[..<mid], b) + [hash(leaves[mid...])] }
    return subproof(m - k, leaves[mid...], false) + [hash(leaves[..<mid])]
  }
}

/// The stored complete subtrees of a tree of `leaves`, computed from them.
private func subtrees(_ leaves: [[UInt8]]) -> (Int, UInt64) throws -> [UInt8] {
  { level, index in
    let start = Int(index) << level
    let end = start + (1 << level)
    guard end <= leaves.count else { throw TreeError.outOfRange("no complete subtree \(level)/\(index)") }
    return NaiveTree.hash(leaves[start..<end])
  }
}

private func leaves(_ count: Int) -> [[UInt8]] {
  (0..<count).map { MerkleHash.leaf(seq: UInt64($0 + 1), value: Array("entry \($0 + 1)".utf8)) }
}

@Suite struct MerkleTreeTests {
  @Test func hashesFollowRFC9162() {
    #expect(MerkleHash.emptyRoot.hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(MerkleHash.leaf([UInt8]()).hex == Array(SHA256.hash(data: [0x00])).hex)
    let a = MerkleHash.leaf([1]), b = MerkleHash.leaf([2])
    #expect(MerkleHash.node(a, b) == Array(SHA256.hash(data: [0x01] + a + b)))
    #expect(MerkleHash.leaf(seq: 258, value: [9, 9]) == Array(SHA256.hash(data: [0, 0, 0, 0, 0, 0, 0, 1, 2, 9, 9])))
  }

  @Test func rootsAndInclusionProofsMatchTheNaiveTreeForEverySizeUpTo70() throws {
    let all = leaves(70)
    for size in 0...70 {
      let slice = Array(all.prefix(size))
      let root = try MerkleTree.root(size: UInt64(size), subtree: subtrees(slice))
      #expect(root == NaiveTree.hash(slice[...]), "root of \(size)")
      var frontier = MerkleFrontier()
      for leaf in slice { frontier.append(leaf: leaf) }
      #expect(frontier.root == root, "frontier root of \(size)")
      #expect(try MerkleFrontier(size: UInt64(size), subtree: subtrees(slice)) == frontier)
      for index in 0..<size {
        let proof = try MerkleTree.inclusionProof(index: UInt64(index), size: UInt64(size), subtree: subtrees(slice))
        #expect(proof == NaiveTree.path(index, slice[...]), "path of \(index) in \(size)")
        try MerkleTree.verifyInclusion(leafHash: slice[index], index: UInt64(index), size: UInt64(size), proof: proof, root: root)
      }
    }
  }

  @Test func consistencyProofsMatchTheNaiveTreeForEverySizeUpTo70() throws {
    let all = leaves(70)
    let roots = (0...70).map { NaiveTree.hash(all.prefix($0)[...]) }
    for newSize in 1...70 {
      let slice = Array(all.prefix(newSize))
      for oldSize in 0...newSize {
        let proof = try MerkleTree.consistencyProof(
          from: UInt64(oldSize), to: UInt64(newSize), subtree: subtrees(slice))
        let expected = oldSize == 0 || oldSize == newSize ? [] : NaiveTree.subproof(oldSize, slice[...], true)
        #expect(proof == expected, "proof \(oldSize) → \(newSize)")
        try MerkleTree.verifyConsistency(
          oldSize: UInt64(oldSize), newSize: UInt64(newSize), oldRoot: roots[oldSize], newRoot: roots[newSize],
          proof: proof)
      }
    }
  }

  @Test func tamperedInclusionProofsFail() throws {
    let all = leaves(70)
    for size in [2, 3, 7, 8, 33, 69] {
      let slice = Array(all.prefix(size))
      let root = NaiveTree.hash(slice[...])
      for index in [0, size / 2, size - 1] {
        let proof = try MerkleTree.inclusionProof(index: UInt64(index), size: UInt64(size), subtree: subtrees(slice))
        for position in proof.indices {
          var flipped = proof
          flipped[position][position % 32] ^= 0x01
          #expect(throws: TreeError.self) {
            try MerkleTree.verifyInclusion(leafHash: slice[index], index: UInt64(index), size: UInt64(size), proof: flipped, root: root)
          }
        }
        // Another index, another size, a missing or an extra hash, another leaf: all fail.
        #expect(throws: TreeError.self) {
          try MerkleTree.verifyInclusion(
            leafHash: slice[index], index: UInt64((index + 1) % size), size: UInt64(size), proof: proof, root: root)
        }
        #expect(throws: TreeError.self) {
          // The size is bound by the checkpoint: a proof for `size` fails against the root of `size + 1`.
          try MerkleTree.verifyInclusion(
            leafHash: slice[index], index: UInt64(index), size: UInt64(size + 1), proof: proof,
            root: NaiveTree.hash(all.prefix(size + 1)[...]))
        }
        #expect(throws: TreeError.self) {
          try MerkleTree.verifyInclusion(
            leafHash: slice[index], index: UInt64(index), size: UInt64(size), proof: proof.dropLast(), root: root)
        }
        #expect(throws: TreeError.self) {
          try MerkleTree.verifyInclusion(
            leafHash: slice[index], index: UInt64(index), size: UInt64(size), proof: proof + [root], root: root)
        }
        #expect(throws: TreeError.self) {
          try MerkleTree.verifyInclusion(
            leafHash: all[size % 70 == index ? 69 - index : size % 70], index: UInt64(index), size: UInt64(size),
            proof: proof, root: root)
        }
      }
    }
  }

  @Test func tamperedConsistencyProofsFail() throws {
    let all = leaves(70)
    let roots = (0...70).map { NaiveTree.hash(all.prefix($0)[...]) }
    for (oldSize, newSize) in [(1, 2), (3, 7), (4, 8), (6, 8), (8, 9), (13, 70), (32, 64), (64, 70)] {
      let slice = Array(all.prefix(newSize))
      let proof = try MerkleTree.consistencyProof(from: UInt64(oldSize), to: UInt64(newSize), subtree: subtrees(slice))
      for position in proof.indices {
        var flipped = proof
        flipped[position][31] ^= 0x80
        #expect(throws: TreeError.self, "flipped hash \(position) of \(oldSize) → \(newSize)") {
          try MerkleTree.verifyConsistency(
            oldSize: UInt64(oldSize), newSize: UInt64(newSize), oldRoot: roots[oldSize], newRoot: roots[newSize],
            proof: flipped)
        }
      }
      #expect(throws: TreeError.self) {
        try MerkleTree.verifyConsistency(
          oldSize: UInt64(oldSize + 1), newSize: UInt64(newSize), oldRoot: roots[oldSize], newRoot: roots[newSize],
          proof: proof)
      }
      #expect(throws: TreeError.self) {
        try MerkleTree.verifyConsistency(
          oldSize: UInt64(oldSize), newSize: UInt64(newSize), oldRoot: roots[oldSize - 1], newRoot: roots[newSize],
          proof: proof)
      }
      #expect(throws: TreeError.self) {
        try MerkleTree.verifyConsistency(
          oldSize: UInt64(oldSize), newSize: UInt64(newSize), oldRoot: roots[oldSize], newRoot: roots[newSize],
          proof: proof.dropLast())
      }
    }
    // Equal sizes with different roots are inconsistent.
    #expect(throws: TreeError.self) {
      try MerkleTree.verifyConsistency(oldSize: 5, newSize: 5, oldRoot: roots[5], newRoot: roots[6], proof: [])
    }
    #expect(throws: TreeError.self) {
      try MerkleTree.inclusionProof(index: 5, size: 5, subtree: subtrees(all))
    }
  }
}
