// Import boundaries between areas (the top folders of src/): an area may not import another area's
// repository or entity files, only what its module exports (services). Filled in by the table-ownership
// work of issue 23; eslint.config.mjs spreads this array after its own rules.
// Each element is a flat-config object, e.g. { files: ['src/issues/**/*.ts'], rules: { ... } }.
export default [];
