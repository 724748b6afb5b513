import { GenerationRequestSchema, EditRequestSchema } from '../src/spec/request-schemas.ts';
console.log(Object.keys(GenerationRequestSchema.shape), Object.keys(EditRequestSchema.shape));
