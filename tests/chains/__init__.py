"""The local chains the tests run on (docs/funding.md §1): ``chains.launch`` starts them."""
