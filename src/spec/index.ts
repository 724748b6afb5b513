export * from './constants.js';
export * from './image-type.js';
export * from './request-schemas.js';
export * from './result-schemas.js';
export * from './validate.js';
