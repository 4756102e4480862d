// Module boundaries, checked by dependency-cruiser (`npm run lint:boundaries`, part of `npm run lint`):
// which folders may import which, over static, dynamic and type-only imports of .ts and .tsx files at
// any depth, resolved as TypeScript resolves them (tsconfig.json).
/** A plugin's public surfaces: its index and its contract module. */
const PLUGIN_SURFACE = '^plugins/[^/]+/(index|api)\\.ts$'
/** The kernel's public surfaces: the index, TypeBox, and what only runtimes use. */
const KERNEL_SURFACE = '^kernel/(index|schema|runtime-api)\\.ts$'
/** The campaign core's published module kit: for server code, for manifests (both bundles), for pages. */
const CAMPAIGN_MODULE_KIT = '^plugins/campaign/(module-kit|modules/manifest|ui/src/module-kit)\\.ts$'

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'plugin-through-its-surface',
      comment: 'A plugin reaches another plugin only through its index.ts or its contract module api.ts.',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { path: '^plugins/[^/]+/', pathNot: ['^plugins/$1/', PLUGIN_SURFACE] }
    },
    {
      name: 'kernel-through-its-surface',
      comment: 'A plugin reaches the kernel only through kernel/index.ts, kernel/schema.ts (TypeBox) and kernel/runtime-api.ts (what only runtimes use); never kernel/cli/.',
      severity: 'error',
      from: { path: '^plugins/' },
      to: { path: '^kernel/', pathNot: KERNEL_SURFACE }
    },
    {
      name: 'kernel-imports-no-plugin',
      comment: 'The kernel (kernel/ without kernel/cli/) knows no plugin.',
      severity: 'error',
      from: { path: '^kernel/', pathNot: '^kernel/cli/' },
      to: { path: '^plugins/' }
    },
    {
      name: 'host-not-the-command',
      comment: 'The host (kernel/ without kernel/cli/) does not use the berth command\'s code, except where the plugin contract hands it to plugins: index.ts re-exports it, plugin.ts types commands().',
      severity: 'error',
      from: { path: '^kernel/', pathNot: ['^kernel/cli/', '^kernel/(index|plugin)\\.ts$'] },
      to: { path: '^kernel/cli/' }
    },
    {
      name: 'no-cycle-across-plugins',
      comment: 'No import cycle runs through modules of more than one plugin.',
      severity: 'error',
      from: { path: '^plugins/([^/]+)/' },
      to: { circular: true, via: { pathNot: '^plugins/$1/' } }
    },
    {
      name: 'campaign-module-no-cycle',
      comment: 'A campaign module folder (modules/<id>/) takes part in no import cycle with the campaign core or another module folder.',
      severity: 'error',
      from: { path: '^plugins/campaign/modules/([^/]+)/' },
      to: { circular: true, via: { pathNot: '^plugins/campaign/modules/$1/' } }
    },
    {
      name: 'campaign-core-imports-no-module',
      comment: 'The campaign core (plugins/campaign/ outside the module folders modules/<id>/) imports no module folder: modules depend on the core, which reads their manifests. The registries listing the modules to load are the exceptions, one per bundle: modules/catalogue.ts for the server (their manifests, functions, services and routes) and ui/src/pages.ts for the browser (their manifests and pages), as the server loads no page and the UI no server code.',
      severity: 'error',
      from: { path: '^plugins/campaign/', pathNot: ['^plugins/campaign/modules/[^/]+/', '^plugins/campaign/(modules/catalogue|ui/src/pages)\\.ts$'] },
      to: { path: '^plugins/campaign/modules/[^/]+/' }
    },
    {
      name: 'campaign-module-through-the-kit',
      comment: 'A campaign module folder (modules/<id>/) reaches the campaign core only through its published module kit: module-kit.ts for server code, modules/manifest.ts for manifests, ui/src/module-kit.ts for pages; and another module folder only through that module\'s index.ts.',
      severity: 'error',
      from: { path: '^plugins/campaign/modules/([^/]+)/' },
      to: { path: '^plugins/campaign/', pathNot: ['^plugins/campaign/modules/$1/', CAMPAIGN_MODULE_KIT, '^plugins/campaign/modules/[^/]+/index\\.ts$'] }
    },
    {
      name: 'campaign-kit-for-modules',
      comment: 'The campaign core does not import the module kits (module-kit.ts, ui/src/module-kit.ts): they re-export the core for modules, and the core importing them would close import cycles through them.',
      severity: 'error',
      from: { path: '^plugins/campaign/', pathNot: '^plugins/campaign/modules/[^/]+/' },
      to: { path: '^plugins/campaign/(module-kit|ui/src/module-kit)\\.ts$' }
    },
    {
      name: 'campaign-page-no-server-code',
      comment: 'No campaign page (a module\'s page.tsx, the UI under ui/src/) reaches, through any chain of imports, the server\'s module kit or a module\'s index.ts, which lead to server code: the browser bundle holds browser code only.',
      severity: 'error',
      from: { path: '^plugins/campaign/(modules/[^/]+/page\\.tsx|ui/src/)' },
      to: { path: '^plugins/campaign/(module-kit|modules/[^/]+/index)\\.ts$', reachable: true }
    },
    {
      name: 'product-code-not-tests',
      comment: 'The kernel, the plugins and the WASM codecs import nothing from test/ or bench/: tests and benchmarks build on the product, not the other way round (the build, tsconfig.build.json, leaves test/ out).',
      severity: 'error',
      from: { path: '^(kernel|plugins|wasm)/' },
      to: { path: '^(test|bench)/' }
    },
    {
      name: 'resolvable',
      comment: 'Every import of the kernel and the plugins resolves, so that no import escapes the rules above.',
      severity: 'error',
      from: { path: '^(kernel|plugins)/' },
      to: { couldNotResolve: true }
    }
  ],
  options: {
    exclude: { path: ['(^|/)node_modules/', '^dist/', '^plugins/\\.', '^wasm/(assembly|build)/', '^test/fixtures/'] },
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] }
  }
}
