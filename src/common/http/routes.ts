export const API = 'api/v3';
