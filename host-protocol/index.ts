export * from './version.js';
export * from './frames.js';
export * from './codec.js';
export * from './engine-values.js';
export * from './limits.js';
